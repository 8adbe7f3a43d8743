"""``python -m streamscope`` runs the same entry point as the ``streamscope`` script."""

from streamscope.cli import main

raise SystemExit(main())

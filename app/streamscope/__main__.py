"""``python -m streamscope`` runs the same entry point as the ``streamscope`` script.

It is also the entry script of the one-folder app (packaging/streamscope.spec). There the
window's analysis worker, started with ``spawn``, re-runs this executable with
multiprocessing's own arguments: ``freeze_support()`` hands such a run to multiprocessing
before the command line is parsed (outside a frozen app it does nothing).
"""

import multiprocessing

from streamscope.cli import main

multiprocessing.freeze_support()
raise SystemExit(main())

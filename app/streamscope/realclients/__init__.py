"""Run a stream in the real clients: replay exact bytes into openai-python,
anthropic-python and, in Node, the Vercel AI SDK providers Cherry Studio runs on and the
official Node SDKs, and put what each assembled beside the linter's prediction.

- :mod:`streamscope.lint.clients`: the clients and their pinned versions; :mod:`~.specs`:
  :func:`availability`;
- :mod:`~.run`: :func:`run_in_clients` (a loopback server on a real socket);
- :mod:`~.node`: ``streamscope clients install`` (:func:`install_node_clients`);
- :mod:`~.compare`: the intended answer and :func:`compare` with a lint report;
- :mod:`~.sender_run`: what the client that sent a flow assembled in a run of its leg;
- :mod:`~.agents`, :mod:`~.agent_run`, :mod:`~.agent_output`: the agent CLIs (Claude Code,
  Codex CLI, Qwen Code) installed at pinned versions and run offline against a base URL;
- ``streamscope.cli.clients``: ``streamscope clients install|list|run`` and ``lint --clients``.

No Qt here; the GUI's "Run in real clients" action is built on this API.
"""

from streamscope.lint.clients import CLIENTS, PROFILE_OF, ClientSpec, clients_for
from streamscope.realclients.compare import Answer, Verdict, compare, intended_answer
from streamscope.realclients.node import InstallError, NodeInstall, install_node_clients
from streamscope.realclients.run import ClientRun, StreamInput, run_in_clients, run_many
from streamscope.realclients.specs import availability

__all__ = [
    "CLIENTS",
    "PROFILE_OF",
    "Answer",
    "ClientRun",
    "ClientSpec",
    "InstallError",
    "NodeInstall",
    "StreamInput",
    "Verdict",
    "availability",
    "clients_for",
    "compare",
    "install_node_clients",
    "intended_answer",
    "run_in_clients",
    "run_many",
]

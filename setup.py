"""Ships the repository's ``resources/`` inside the package, as ``streamscope/_resources``.

Everything else about the build is declared in ``pyproject.toml``. The design keeps
``resources/`` at the top of the repository, beside ``app/``; a wheel (``pip install .``,
``pipx install .``) has no such folder, so the build copies it into the package it
builds. An editable install and a source checkout read ``resources/`` where it is
(``streamscope.resources`` looks in both places).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# Generators and notes that live beside the data but are not read at run time.
NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.py", "*.pyc")


class BuildPyWithResources(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "streamscope" / "_resources"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(HERE / "resources", target, ignore=NOT_SHIPPED)


setup(cmdclass={"build_py": BuildPyWithResources})

"""meson's install script: says where the memsim package went and how to import it, when the
interpreter it was installed for does not search that directory (a --prefix of one's own).
argv[1]: the package's site-packages directory (without any --destdir)."""

import os
import sys

where = sys.argv[1].rstrip("/")
searched = {os.path.realpath(p) for p in sys.path if p}
if os.path.realpath(where) not in searched:
    print(f"memsim: meson install puts the Python package in {where}, which {sys.executable} "
          f"does not search: set PYTHONPATH={where} to import memsim")

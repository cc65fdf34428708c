"""Prints the site-packages directory under PREFIX (argv[1]) that this interpreter searches,
or, where it searches none there, the standard one for PREFIX (meson's install directory for
the memsim package)."""

import site
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/")
for d in site.getsitepackages():
    if d.startswith(prefix + "/") and "/python3" in d:
        print(d)
        break
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))

"""The exceptions memsim raises: one line each, the command line's own message."""


class Error(Exception):
    """A memsim error: what the command line would print on one line and exit 1 for."""


class UsageError(Error, ValueError):
    """Bad arguments: what the command line refuses with exit status 2."""


class ArgumentTypeError(UsageError, TypeError):
    """An argument of the wrong Python type (a float where an int is needed, ...)."""


class RowsFailedWarning(UserWarning):
    """A sweep finished with some rows failed: they are returned with their "error"."""

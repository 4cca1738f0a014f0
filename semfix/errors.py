"""The two ways a source can fail, shared by the engine and the API."""


class SourceError(Exception):
    """The source cannot be processed (it does not parse or decode); it is left alone."""


class SafetyError(Exception):
    """semfix produced a rewrite that failed its own checks; it must not be written."""

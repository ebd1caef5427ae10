"""A plugin whose import raises its own BaseException subclass."""


class LicenseAbort(BaseException):
    """Raised by a vendor library that wants to end the program."""


raise LicenseAbort("no seat left on the license server")

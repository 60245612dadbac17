"""Every request, response and header schema in ``schemas/messages`` as a message class.

``codec.messages.MetadataRequest`` and so on; see ``codec.message.Message`` for the methods.
"""
from .message import build_message_class
from .schema import load_package

ALL = {name: build_message_class(spec) for name, spec in load_package("kraftwire.schemas.messages").items()}
globals().update(ALL)
__all__ = sorted(ALL)

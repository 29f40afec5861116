"""The one vocabulary of the protocol: every layout, number, error and type, defined once.

The encoder, the decoder, the server and the tools import it; it imports none of them."""

__all__: list[str] = []

"""The console's side of the fleet API: the stream client, the admin client, and the stream decoder."""

from console.client.admin import AdminClient, ApiError
from console.client.decode import DecodeCounts, MalformedMessage, StreamDecoder, decode_message
from console.client.stream import StreamClient, stream_url
from console.client.token import load_token

__all__ = [
    "AdminClient",
    "ApiError",
    "DecodeCounts",
    "MalformedMessage",
    "StreamClient",
    "StreamDecoder",
    "decode_message",
    "load_token",
    "stream_url",
]

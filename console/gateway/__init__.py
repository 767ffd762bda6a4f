"""The reference gateway fleet on real sockets: a gateway node, the client SDK and the load generator.

Client-facing, a node does what the seeds say a well-run gateway does: admission before any handshake
work (token bucket + connection ceiling → 503 with a randomized Retry-After), a channel stream with
offsets and an epoch, resume from offset + epoch, paced drains with a reconnect hint, and a maximum
connection lifetime. Operator-facing, it serves the node admin API of ../shared/DESIGN.md.
"""

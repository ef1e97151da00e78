"""The league server: `tracker serve`, an ASGI application over the application service; its JSON
API, the browser viewer's pages, the event streams, the per-player service, the dice key store,
and the command lines it runs for remote players.

May import: cli (it runs players' command lines through the same click group), and everything
the cli room may import.
"""

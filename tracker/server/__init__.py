"""The league server: `tracker serve`, an ASGI application over the application service."""

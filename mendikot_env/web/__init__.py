"""The web table of ``mendikot serve``: play against any agent in the browser, with friends
by link, and replay any record seen by every seat or by one (its belief and the search's values).

:mod:`.app` is the ASGI app and its routes, :mod:`.tables` the games in progress on the server,
:mod:`.views` what the server sends one seat, :mod:`.replays` the records stepped through; the
page (``static/``) only shows and clicks. Needs the ``web`` extra (``pip install -e '.[web]'``).
"""

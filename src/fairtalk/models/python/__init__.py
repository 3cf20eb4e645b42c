"""The ``python:`` backend: a user's own function or Responder, loaded from a file or module (``python:bot.py:reply``).

``_responder.py`` holds :class:`PythonResponder`; ``_loading.py`` finds and imports the user's module;
``_user_code.py`` fingerprints the code a model reads, so that a changed bot is a new model.
"""

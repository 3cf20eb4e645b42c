"""Ray: generation on actors (:class:`RayEngine`, :class:`RayResponder`) and scoring in Ray tasks (``RayScorer``).

``_engine.py`` holds the engine and the responder it starts (one module, so no import runs back);
``_connect.py`` the connection both use; ``_scoring.py`` per-response measures in Ray tasks.
"""

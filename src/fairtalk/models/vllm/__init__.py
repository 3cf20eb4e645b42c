"""The ``vllm:`` backend: vLLM's offline engine in this process (CUDA only; ``pip install 'fairtalk[vllm]'``).

``_engine.py`` holds :class:`VLLMResponder` and its options; ``_backends.py`` the engine's start-up and teardown.
"""

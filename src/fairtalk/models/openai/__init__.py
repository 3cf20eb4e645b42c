"""The ``openai:`` backend: any OpenAI-compatible chat or completions server (vLLM, Ollama, llama.cpp, TGI, OpenAI).

``_responder.py`` holds :class:`OpenAIResponder` (streaming, retries, replicas); ``_options.py`` its
options; ``_latency.py`` the latency preflight that sets the timeout; ``_replicas.py`` spreading over
several server URLs; ``_urls.py`` how a URL is shown without its secrets.
"""

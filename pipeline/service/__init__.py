"""``docpipe serve``: the HTTP service (FastAPI + uvicorn, the optional ``[serve]`` extra). See docs/service.md."""

"""Minds: the model behind the write path (``port``), the bundled ``offline`` reader, the
``http`` adapter for any OpenAI-compatible endpoint, and a scripted ``fake`` for tests."""

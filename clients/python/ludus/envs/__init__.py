"""Environments over a Ludus server: ``ludus.envs.text`` (TextArena's shape, for LLM loops), ``ludus.envs.pettingzoo``
(PettingZoo AEC, every seat through one env) and ``ludus.envs.gymnasium`` (one seat against fixed opponents), on the
blocking client of ``ludus.envs.sync``. Each is imported on its own, so that the text environment needs nothing but
``websockets`` and the others need ``numpy``, ``gymnasium`` and ``pettingzoo`` (the ``envs`` extra)."""

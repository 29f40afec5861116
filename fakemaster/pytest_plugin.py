"""pytest plugin of fakemaster (registered through the ``pytest11`` entry point).

The fixtures arrive with the server (issue 3); until then the plugin only registers itself.
"""

"""Clients that misbehave on purpose, each in one way (tests/fakemaster/contract/
test_hostile_clients.py runs ``fakemaster check`` on each): run as ``python FILE.py OUT``."""

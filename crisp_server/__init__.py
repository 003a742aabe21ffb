"""Crisp: a multiplayer server for the card game of memory and bluff."""

__version__ = "0.1.0"

"""Test support shipped with the package: the scripted model (the only fake) and its server.

Support code, below the entry points: it may use anything but `interfaces` and `evals`.
"""

"""Caliper's Ray executor: each attempt of a run as a Ray task on a cluster.

``caliper run SPEC --executor ray [--ray-address auto|ray://host:port]``. Nothing here imports
Ray until a run actually uses the executor.
"""

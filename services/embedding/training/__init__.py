"""Reproducible training of the embedding tiers.

python -m mithril.services.embedding.training.train
"""

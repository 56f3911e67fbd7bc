"""Experiment configs: each get_config() builds on configs/default.py for one research setting."""

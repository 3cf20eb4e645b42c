"""Debiasing: counterpart data augmentation, word-embedding regularization and pool filtering."""

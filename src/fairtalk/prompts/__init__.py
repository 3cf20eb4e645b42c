"""Prompt-based NLG bias evaluation with syntactically diverse prompts (paper 004)."""

"""Reference dialogue models (Seq2Seq, Transformer retrieval) and their training loops."""

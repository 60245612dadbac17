"""Durable file writes that every wing keeping files on disk shares (the metadata log in ``raft``, the
partition logs' checkpoints in ``storage``): a directory's entries made durable, a file replaced all at
once. It imports nothing of kraftwire, so any wing may import it.
"""

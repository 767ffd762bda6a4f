"""The audit log of guarded actions: one hash-chained JSONL record per attempt (issue #4, section 3)."""

from console.audit.chain import GENESIS_HASH, ChainReport, record_hash, verify_lines
from console.audit.log import AuditLog, default_audit_path, open_audit_log, verify_file

__all__ = [
    "GENESIS_HASH",
    "AuditLog",
    "ChainReport",
    "default_audit_path",
    "open_audit_log",
    "record_hash",
    "verify_file",
    "verify_lines",
]

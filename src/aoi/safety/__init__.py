"""Safety in depth above RBAC: the command policy, the executor's approval gate and the audit log."""

from aoi.safety.approval import DEFAULT_RULES, ApprovalPolicy, Decision, Rule, RuleError, parse_rules
from aoi.safety.audit import AuditLog, read
from aoi.safety.policy import Verdict, check

__all__ = ["DEFAULT_RULES", "ApprovalPolicy", "AuditLog", "Decision", "Rule", "RuleError", "Verdict", "check",
           "parse_rules", "read"]

"""`python -m gradscope.diagnosis`: print the rule table (status, priority, rule, what it finds)."""
from . import REGISTRY

print(REGISTRY.format())

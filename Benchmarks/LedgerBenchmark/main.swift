print("ledger benchmark: not yet")

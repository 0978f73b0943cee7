"""The write path (design §2): validation, routing, plans, and the pipeline that runs them."""

"""The pure steps, in pipeline order; each returns a new value and never touches disk or network.

    validate     validated_configurations()   task file bytes → typed, checked frame
    stability    stable_configurations()      → stable runs, and the excluded with their reason
    selection    selected_configurations()    → per (model, GPU) the pick under the deadline
    derive       index_rows()                 → the published row fields

and the products built on them: robustness (runner-up, spread), sweep (picks per deadline),
curves (energy against latency per configuration, Pareto frontier).
"""

"""The pages people open: the interactive report of one index, and the published site.

``inputs`` reads an index, its build report and the snapshot it names, and checks that they
belong together; ``page`` writes the self-contained HTML page from them (``assets/`` holds its
template, style, script, the offline Vega bundle and the charts' Vega-Lite specifications, which
``specs`` fills in); ``site`` the static site with its JSON API and Data Package.
"""

"""The pages people open: the interactive report of one index, and the published site.

``inputs`` reads an index, its build report and the snapshot it names, and checks that they
belong together; ``page`` writes the self-contained HTML page from them (``assets/`` holds its
template, style, script and the offline Vega bundle); ``charts`` the Vega-Lite specifications;
``site`` the static site with its JSON API and Data Package.
"""

"""metashell: a faithful, faster superset of Kafka's kafka-metadata-shell.

Data flows one way: loader (bytes -> records) -> replay (records -> image)
-> fs (image -> virtual tree) -> commands -> shell / cli.
"""

__version__ = "0.1.0"

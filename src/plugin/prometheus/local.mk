# src/plugin/prometheus: sources and tests of the prometheus plugin

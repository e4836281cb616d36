/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.h — the Prometheus registry every subsystem reports into.
 *
 * The process owns one registry (main() makes it and hands it to every
 * instance through server_env; unit tests make their own), so families
 * outlive reloads and counters never go back. Plugins and subsystems look
 * their families up once, at setup or start, and keep the pointers in
 * their own instance; a family lives as long as its registry.
 * A family has a name, help text, a type and fixed label names; a series is
 * one combination of label values. Updating a series is safe from any thread
 * and never blocks on I/O: the series is found by hashing its label values
 * and updated with atomics; a new series is created under the family's lock
 * the first time its label values are seen.
 *
 * metrics_render() writes the text exposition format (version 0.0.4), which
 * the prometheus plugin serves on /metrics.
 *
 * Layer: src/runtime, below the API client, the topology engine and the
 * server, which all report here; it uses only src/common.
 * Checked (assert): a family has a name and help text; a histogram's
 * bounds are ascending; rendering needs a registry.
 */
#ifndef TOPODNS_METRICS_H
#define TOPODNS_METRICS_H

#include <stddef.h>

typedef enum { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM } metric_type;

typedef struct metric_family metric_family;
typedef struct metrics_registry metrics_registry;

metrics_registry *metrics_registry_new(void);
/* Free the registry and every family (nothing may use them any more). */
void metrics_registry_free(metrics_registry *reg);

/* Register (or find, when already registered with the same name) a family;
 * safe from any thread. labels is a NULL-terminated list of label names
 * (may be NULL for none). buckets/nbuckets give a histogram's upper bounds
 * (ignored otherwise). NULL when reg is NULL or memory runs out; the update
 * functions below accept a NULL family and do nothing. */
metric_family *metrics_family(metrics_registry *reg, const char *name, const char *help,
                              metric_type type, const char *const *labels,
                              const double *buckets, size_t nbuckets);

/* Histogram bounds start, start*factor, ... (n of them; client_golang's
 * ExponentialBuckets, which CoreDNS's histograms are built with);
 * start > 0 and factor > 1, so that they ascend. */
void metrics_exponential_buckets(double *out, size_t n, double start, double factor);

/* values: one per label name, in order (NULL for a family with no labels). */
void metrics_add(metric_family *f, const char *const *values, double delta);
void metrics_set(metric_family *f, const char *const *values, double value);
void metrics_observe(metric_family *f, const char *const *values, double value);
/* The series of these values, created when first seen: for a caller that
 * updates the same series often and keeps the pointer (the prometheus
 * plugin's per-request series). It stays valid as long as the registry
 * (a removed series is no longer rendered: keep pointers only to families
 * nobody removes from). NULL for a NULL family or when memory runs out;
 * the two updates accept NULL and do nothing. */
typedef struct metric_series metric_series;
metric_series *metrics_series(metric_family *f, const char *const *values);
void metrics_series_add(metric_series *s, double delta);        /* counter/gauge */
void metrics_series_observe(metric_series *s, double value);    /* histogram */
/* Remove every series of a gauge family whose values match (used when a
 * plugin instance goes away). */
void metrics_remove(metric_family *f, const char *const *values);

/* Text exposition of every family with at least one series (reg not
 * NULL). Returns a malloc'd NUL-terminated buffer the caller frees, *len
 * (may be NULL) its length; NULL when memory runs out. */
char *metrics_render(metrics_registry *reg, size_t *len);

/* Value of one series (for tests); 0 when absent. For histograms, the count. */
double metrics_value(metrics_registry *reg, const char *name, const char *const *values);

#endif

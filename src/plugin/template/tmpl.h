/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tmpl.h — the small Go text/template evaluator of the template plugin.
 *
 * CoreDNS renders a template's answer, additional and authority records
 * with Go's text/template over the matched query. This evaluator accepts
 * the part of that language Corefiles use and refuses everything else when
 * the template is compiled (at startup), so a template either runs as Go
 * would run it or the Corefile does not load:
 *
 *   text and actions  {{ pipeline }}, trimming markers {{- and -}},
 *                     comments (a C-style comment right inside {{ }})
 *   operands          .Name .Zone .Class .Type .Regex .Remote .Match .Group
 *                     .Group.NAME .Message .Message.Id .Question
 *                     .Question.Name .Question.Qtype .Question.Qclass
 *                     .Meta "label"; "string" and `raw` literals, integer
 *                     literals (decimal, 0x, 0o, 0b), true, false,
 *                     ( pipeline )
 *   functions         index, len, print, parseInt (strconv.ParseUint:
 *                     parseInt STRING BASE BITSIZE)
 *   pipelines         cmd | cmd ...: the value of each command is the last
 *                     argument of the next, as in Go
 *   refused           variables ($x, :=), if/else/range/with/define/
 *                     template/block/break/continue, other functions, float,
 *                     character and complex literals, nil, .Var and any other
 *                     field
 *
 * What Go finds only when it runs a template (a wrong argument type, an
 * index out of range, a parseInt that fails) is an execution error here
 * too (tmpl_exec returns -1), as CoreDNS counts it a template failure.
 * Values print as Go's fmt prints them: .Match as "[a b]", .Group as
 * "map[0:a 1:b name:c]" (keys sorted), a missing .Group key as
 * "<no value>", a byte from `index` of a string as its number.
 *
 * Memory and threads: tmpl_compile() runs on the loading thread and the
 * compiled template is immutable afterwards; tmpl_exec() may run on any
 * number of threads at once and returns a malloc'd string the caller frees;
 * tmpl_free() frees a template (the plugin's destroy).
 */
#ifndef TOPODNS_TMPL_H
#define TOPODNS_TMPL_H

#include <stddef.h>

typedef struct tmpl tmpl;

/* What one query gives a template (CoreDNS's templateData). Strings are
 * the caller's and live during tmpl_exec(). */
typedef struct tmpl_data {
    const char *zone, *name, *regex, *cls, *type, *remote;
    const char *const *match;       /* whole match and groups, "" if unset */
    const char *const *gname;       /* group names, "" for unnamed */
    size_t nmatch;
    const char *message;            /* the request as text (.Message) */
    const char *question;           /* the question as text (.Question) */
    const char *qname;              /* the question's name (.Question.Name) */
    unsigned id, qtype, qclass;
    /* .Meta "label": the metadata value, NULL for none (prints ""). */
    const char *(*meta)(const void *ctx, const char *label, char *buf, size_t cap);
    const void *meta_ctx;
} tmpl_data;

/* Compile text. 0 with *out set, or -1 with a message in err. */
int tmpl_compile(const char *text, tmpl **out, char *err, size_t errlen);
void tmpl_free(tmpl *t);
/* The template as Go's Tree.Root.String() prints it ("{{.Name}} 60 IN A
 * {{.Group.a}}"): CoreDNS's `template` metric label. */
const char *tmpl_string(const tmpl *t);
/* Which lazily computed data the template reads. */
#define TMPL_USES_MESSAGE 0x1
#define TMPL_USES_QUESTION 0x2
unsigned tmpl_uses(const tmpl *t);
/* Run it: 0 with *out (malloc'd, NUL-terminated), or -1 with an error. */
int tmpl_exec(const tmpl *t, const tmpl_data *d, char **out, char *err, size_t errlen);

#endif

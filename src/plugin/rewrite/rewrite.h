/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rewrite.h — the rewrite plugin's rules, shared by its three files:
 *
 *   setup.c   parses `rewrite` lines into rw_rule (the Corefile grammar and
 *             error texts of CoreDNS's rewrite)
 *   query.c   applies the rules to a query, in order, collecting the
 *             response actions each rule that matched asks for (rw_act)
 *   reply.c   serves: rewrites the query handed to the next plugin, and
 *             from a write hook restores the question and applies the
 *             response actions to whatever reply comes back; the cname
 *             rule's lookup of the new target runs there too
 *
 * Names are handled in presentation form, lower case, with the final dot
 * ("a.example.org."), as CoreDNS matches them: every rule sees the name as
 * the rules before it left it.
 *
 * Ownership and threads: rw_conf and its rules are built by setup on the
 * loading thread and read, never written, by workers; destroy frees them
 * (after the instance's workers stopped). An rw_state is one request's:
 * made by the worker serving it, freed by the request's done hook.
 */
#ifndef TOPODNS_PLUGIN_REWRITE_H
#define TOPODNS_PLUGIN_REWRITE_H

#include <stddef.h>
#include <stdint.h>
#include "common/goregex.h"
#include "server/lookup.h"
#include "server/plugin.h"

/* Longest name in presentation form (every octet escaped as \DDD). */
#define RW_NAME_MAX 1024
/* Groups a regex rule substitutes: {0} to {100}, the references CoreDNS
 * counts (getSubExprUsage); a higher {N} is left as written. */
#define RW_MAX_GROUPS 100

enum rw_match { RW_EXACT, RW_PREFIX, RW_SUFFIX, RW_SUBSTRING, RW_REGEX };

enum rw_kind {
    RW_NAME, RW_TYPE, RW_CLASS, RW_TTL, RW_RCODE, RW_CNAME,
    RW_EDNS_LOCAL,      /* data fixed in the Corefile */
    RW_EDNS_VAR,        /* data from a variable: {qname}, {client_ip}, ... */
    RW_EDNS_NSID, RW_EDNS_SUBNET,
};

enum rw_action { RW_SET, RW_APPEND, RW_REPLACE, RW_UNSET };

/* A string rewriter of a response action (CoreDNS's stringRewriter):
 * regex FROM → TO with {N} groups, or a suffix swap. */
typedef struct rw_str {
    int is_suffix;
    goregex *re;                    /* !is_suffix */
    char *from, *to;                /* suffix: from → to; regex: to */
} rw_str;

/* A response action a name rule carries in the Corefile (`answer name`,
 * `answer value`, or the suffix rule's `answer auto`). */
typedef struct rw_static {
    int value;                      /* 0: owner names, 1: record values */
    rw_str s;
} rw_static;

typedef struct rw_rule {
    enum rw_kind kind;
    int stop;                       /* stop (default) or continue */
    /* name, ttl, rcode, cname: how the name is matched */
    enum rw_match match;
    char *from, *to;                /* normalized, or the regex text */
    goregex *re;                    /* RW_REGEX */
    int auto_answer;                /* name: answer auto (always for exact) */
    rw_static *statics;             /* name: answer rules, in order */
    size_t nstatics;
    /* type / class */
    uint16_t from_code, to_code;
    /* ttl */
    uint32_t ttl_min, ttl_max;
    /* rcode */
    int rc_old, rc_new;
    /* edns0 */
    enum rw_action action;
    int revert;
    uint16_t opt_code;
    uint8_t *data;                  /* local data / variable name */
    size_t datalen;
    char *var;                      /* RW_EDNS_VAR: "{client_ip}", "{a/b}" */
    uint8_t v4_bits, v6_bits;       /* subnet */
} rw_rule;

typedef struct rw_conf {
    rw_rule *rules;
    size_t nrules;
    /* local option codes of edns0 rules: echoed in replies as CoreDNS
     * marks them supported */
    uint16_t echo_codes[32];
    size_t necho;
    struct instance *ins;           /* for the cname rule's lookups */
} rw_conf;

/* One response action of one request. */
enum rw_act_kind {
    ACT_NAME, ACT_VALUE,            /* owner / value through a string rewriter */
    ACT_TTL, ACT_RCODE, ACT_CNAME,
    ACT_OPT_REMOVE,                 /* revert of a set/append: take it out */
    ACT_OPT_RESTORE,                /* revert of a replace: the original back */
};

typedef struct rw_act {
    enum rw_act_kind kind;
    const rw_str *s;                /* ACT_NAME/VALUE with a static rewriter */
    char *remap_from, *remap_to;    /* ACT_NAME/VALUE for answer auto (owned) */
    const rw_rule *rule;            /* ttl, rcode, cname */
    uint16_t code;                  /* option code */
    uint8_t *data;                  /* ACT_OPT_RESTORE: original data (owned) */
    uint16_t len;
} rw_act;

/* One request's state from the query side to the reply. */
typedef struct rw_state {
    const rw_conf *conf;
    const struct handler *h;
    dns_req *r;
    uint8_t orig_qname[DNAME_MAX];
    uint16_t orig_qtype, orig_qclass;
    dns_ecs orig_ecs;               /* the query's ECS, for a revert */
    int orig_has_ecs;
    rw_act *acts;
    size_t nacts, capacts;
    /* the cname rule's lookup */
    const rw_act *cname_act;
    unsigned cname_index;           /* answer record whose target matched */
    uint8_t cname_to[DNAME_MAX];
    lookup_set *ls;                 /* the lookup, once started */
    int looked_up;                  /* it has finished */
} rw_state;

/* setup.c */
int rw_parse(cf_disp *d, rw_conf *c);
void rw_conf_free(rw_conf *c);
/* Parse one rule from its arguments (the Corefile words after `rewrite`).
 * 0, or -1 with CoreDNS's message in err. */
int rw_rule_parse(rw_rule *rule, const char *const *args, size_t n, rw_conf *c,
                  char *err, size_t errlen);
void rw_rule_free(rw_rule *rule);

/* query.c */
enum { RW_IGNORED = 0, RW_DONE = 1, RW_ERROR = -1 };
/* Apply one rule to the working query q (name: its current name, lower
 * case, updated in place). Response actions are added to st. */
int rw_apply(const rw_rule *rule, dns_msg *q, char *name, rw_state *st);
/* Does the rule's name matcher accept name? */
int rw_match_name(const rw_rule *rule, const char *name);
/* Run a string rewriter over src into out; 1 when it changed. */
int rw_str_apply(const rw_str *s, const char *src, char *out, size_t cap);
/* Replace every "{N}" of tmpl with the match's group N of src, in turn
 * for N = 0.. (groups that did not take part give ""). */
void rw_expand(const char *tmpl, const char *src, const long *m, size_t ngroups,
               char *out, size_t cap);
void rw_state_free(rw_state *st);
int rw_add_act(rw_state *st, rw_act a);

/* reply.c */
/* Apply st's response actions to r->resp, restoring the question. The
 * cname action's lookup result, when there is one, is
 * lookup_reply(st->ls, 0). */
int rw_rebuild(rw_state *st, dns_msg *resp);

#endif

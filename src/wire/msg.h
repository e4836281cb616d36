/* SPDX-License-Identifier: Apache-2.0 */
/*
 * msg.h — the DNS message as every plugin sees it.
 *
 * This is the one interface between plugins and the wire. A dns_msg holds the
 * header, one question, the EDNS state and the records of the three sections.
 * Records live in an arena owned by the message (owner names and rdata in
 * uncompressed wire form), so building a reply costs no allocation once the
 * arena has grown to its working size; messages are reset and reused.
 *
 * msg_parse() reads a wire message (strictly: bad pointers, pointer loops,
 * trailing garbage and truncated records are errors). msg_encode() writes one,
 * compressing names where RFC 1035 allows, and truncates to a size limit the
 * way CoreDNS (miekg/dns Msg.Truncate) does: records are kept in order while
 * they fit, everything after the first one that does not fit is dropped, TC is
 * set when anything was dropped, and the OPT record is always kept.
 *
 * Plugins add records with msg_add_rr() or the typed helpers, read them with
 * msg_rr()/msg_count(), and may reorder or remove them in place. Nothing in
 * this interface exposes how records are stored.
 *
 * A dns_msg belongs to one thread at a time (its request's worker); the
 * library keeps no state of its own. Record views returned by msg_rr()
 * point into the message and are valid until it is changed or reset.
 */
#ifndef TOPODNS_MSG_H
#define TOPODNS_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include "wire/dname.h"

enum { SEC_ANSWER = 0, SEC_AUTHORITY = 1, SEC_ADDITIONAL = 2, SEC_COUNT = 3 };

/* Header flag bits as in the second 16-bit word of the header. */
#define F_QR 0x8000
#define F_AA 0x0400
#define F_TC 0x0200
#define F_RD 0x0100
#define F_RA 0x0080
#define F_AD 0x0020
#define F_CD 0x0010

enum {
    RC_NOERROR = 0, RC_FORMERR = 1, RC_SERVFAIL = 2, RC_NXDOMAIN = 3,
    RC_NOTIMP = 4, RC_REFUSED = 5, RC_YXDOMAIN = 6, RC_YXRRSET = 7,
    RC_NXRRSET = 8, RC_NOTAUTH = 9, RC_NOTZONE = 10, RC_BADVERS = 16,
};

enum {
    T_A = 1, T_NS = 2, T_CNAME = 5, T_SOA = 6, T_PTR = 12, T_HINFO = 13,
    T_MX = 15, T_TXT = 16, T_AAAA = 28, T_SRV = 33, T_DNAME = 39,
    T_OPT = 41, T_DS = 43, T_RRSIG = 46, T_NSEC = 47, T_DNSKEY = 48,
    T_NSEC3 = 50, T_SVCB = 64, T_HTTPS = 65, T_IXFR = 251, T_AXFR = 252,
    T_ANY = 255,
};
enum { C_IN = 1, C_CH = 3, C_ANY = 255 };

#define EDNS_OPT_NSID 3
#define EDNS_OPT_ECS 8
#define EDNS_OPT_COOKIE 10   /* RFC 7873: 8 octets, or 16 to 40 (client + server) */
#define EDNS_OPT_EDE 15
#define EDNS_OPTS_MAX 512

/* One resource record; owner and rdata point into the message arena and stay
 * valid until the message is reset or another record is added. */
typedef struct dns_rr {
    const uint8_t *owner;
    uint16_t type, rclass;
    uint32_t ttl;
    const uint8_t *rdata;
    uint16_t rdlen;
} dns_rr;

typedef struct dns_ecs {
    uint16_t family;        /* 1 = IPv4, 2 = IPv6 */
    uint8_t source_prefix;
    uint8_t scope_prefix;
    uint8_t addr[16];       /* the address, zero-padded past the prefix */
} dns_ecs;

typedef struct dns_edns {
    int present;
    uint8_t version;
    int do_bit;
    uint16_t udp_size;      /* advertised payload size as sent */
    uint8_t ext_rcode;      /* upper 8 bits of the rcode as carried */
    int has_ecs;
    dns_ecs ecs;
    /* Reply only: send this OPT record, as the plugin set it, even to a
     * query that had none (CoreDNS keeps an OPT record a plugin put on its
     * reply; the server otherwise echoes EDNS only to EDNS queries). */
    int keep;
    /* Every other option, in wire form (code, length, data) back to back:
     * as received (options past EDNS_OPTS_MAX octets are left out), or as
     * plugins add them to a reply (edns_opt_add). Written after ECS. */
    uint16_t opts_len;
    uint8_t opts[EDNS_OPTS_MAX];
} dns_edns;

/* The data of the first option `code` (not ECS) and its length, or NULL. */
const uint8_t *edns_opt_find(const dns_edns *e, uint16_t code, uint16_t *len);
/* Append an option (not ECS). 0, or -1 when it does not fit. */
int edns_opt_add(dns_edns *e, uint16_t code, const void *data, uint16_t len);
/* Remove every option `code`. */
void edns_opt_remove(dns_edns *e, uint16_t code);

struct msg_rec;             /* private: storage of one record */

typedef struct dns_msg {
    uint16_t id;
    uint16_t flags;         /* F_* bits and the opcode (bits 11-14) */
    uint16_t rcode;         /* full 12-bit rcode */
    int has_question;
    uint8_t qname[DNAME_MAX];
    uint16_t qtype, qclass;
    dns_edns edns;
    /* private below */
    struct msg_rec *recs;
    unsigned nrecs, caprecs;
    uint8_t *arena;
    size_t arena_len, arena_cap;
} dns_msg;

static inline unsigned msg_opcode(const dns_msg *m) { return (m->flags >> 11) & 0xf; }

void msg_init(dns_msg *m);
void msg_reset(dns_msg *m);            /* empty it, keep the memory */
void msg_free(dns_msg *m);
int msg_copy(dns_msg *dst, const dns_msg *src);

/* Parse a wire message. Returns 0, or an rcode (RC_FORMERR) on bad input.
 * On error the header fields that could be read (id, flags) are filled in so
 * that a FORMERR reply can carry them; *hdr_ok says whether they were. */
int msg_parse(dns_msg *m, const uint8_t *wire, size_t len, int *hdr_ok);

/* Encode into buf (cap octets). max is the size limit (512..65535) the reply
 * must fit; compress turns name compression on. Returns the length written,
 * or -1 when even the header and question do not fit. Sets TC in the output
 * (and in m->flags) when records had to be dropped. */
int msg_encode(dns_msg *m, uint8_t *buf, size_t cap, size_t max, int compress);

/* A query topodns sends itself (msg_query). */
typedef struct dns_query {
    uint16_t id;
    uint16_t flags;         /* header bits: F_RD or 0 (the rcode bits are ignored) */
    const uint8_t *qname;   /* wire form, well formed */
    uint16_t qtype, qclass;
    uint16_t edns_size;     /* 0: no OPT; else an OPT (version 0, no options) with this UDP size */
    int do_bit;             /* with an OPT: the DO bit */
} dns_query;

/* Write the query packet into buf (cap octets): header with QDCOUNT 1 (and
 * ARCOUNT 1 with EDNS), the question, the OPT record. Returns its length,
 * or -1 when it does not fit (or the name is longer than DNAME_MAX). */
int msg_query(const dns_query *q, uint8_t *buf, size_t cap);

/* Set the EDNS UDP payload size of the OPT record of a well-formed wire
 * message in place (a query the server received and parsed). Returns 0, or
 * -1 when the message has no OPT record or cannot be walked. */
int msg_wire_set_udp_size(uint8_t *wire, size_t len, uint16_t size);

/* Start a reply to q: id, opcode, RD and CD copied, QR set, question copied,
 * no records. EDNS is echoed by the server, not here. */
void msg_reply_to(dns_msg *resp, const dns_msg *q);

/* 1 when rd (len octets) is a well-formed rdata of type: A and AAAA of
 * their size, TXT whole character-strings, and for the types with names
 * in their rdata (NS, CNAME, PTR, MX, SOA, SRV, NAPTR, ...) every name
 * uncompressed and whole and every fixed field present; other types'
 * rdata is opaque (always 1). What msg_add_rr() checks. */
int msg_rdata_ok(uint16_t type, const uint8_t *rd, size_t len);

/* Records. Each returns 0, or -1 when the message is out of memory or the
 * data is malformed. */
int msg_add_rr(dns_msg *m, int sec, const uint8_t *owner, uint16_t type,
               uint16_t rclass, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen);
int msg_add_a(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const struct in_addr *a);
int msg_add_aaaa(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const struct in6_addr *a);
/* Types whose rdata is a single name: NS, CNAME, PTR, DNAME. */
int msg_add_name(dns_msg *m, int sec, const uint8_t *owner, uint16_t type, uint32_t ttl, const uint8_t *target);
int msg_add_srv(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, uint16_t prio,
                uint16_t weight, uint16_t port, const uint8_t *target);
int msg_add_mx(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, uint16_t pref, const uint8_t *exchange);
/* One or more character-strings, each given as a C string (truncated to 255). */
int msg_add_txt(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const char *const *strs, int n);
int msg_add_soa(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const uint8_t *mname,
                const uint8_t *rname, uint32_t serial, uint32_t refresh, uint32_t retry,
                uint32_t expire, uint32_t minimum);

/* sec is SEC_ANSWER, SEC_AUTHORITY or SEC_ADDITIONAL in msg_count,
 * msg_permute and msg_clear_section (asserted; the caller's contract). */
unsigned msg_count(const dns_msg *m, int sec);
/* The i-th record of a section (0-based); the returned view is a copy. An
 * index past the section gives an empty view (root owner, no rdata). */
dns_rr msg_rr(const dns_msg *m, int sec, unsigned i);
void msg_set_ttl(dns_msg *m, int sec, unsigned i, uint32_t ttl);
/* Move records within a section: perm[i] is the old index of new position i. */
void msg_permute(dns_msg *m, int sec, const unsigned *perm, unsigned n);
/* Drop every record of a section. */
void msg_clear_section(dns_msg *m, int sec);

/* Names of things, for logs and metrics. Unknown values print as TYPE123 /
 * CLASS123 / RCODE123 like miekg/dns. buf must hold 16 octets. */
const char *rr_type_name(uint16_t type, char *buf);
const char *rr_class_name(uint16_t cls, char *buf);
const char *rcode_name(unsigned rcode, char *buf);
/* The reverse, as miekg/dns's StringToType / StringToClass / StringToRcode
 * maps read them: exact (upper-case) names only, no TYPE123 forms. The
 * value, or -1 for a name they do not hold. */
int rr_type_from_name(const char *s);
int rr_class_from_name(const char *s);
int rcode_from_name(const char *s);
/* Presentation form of one record, "owner ttl CLASS TYPE rdata" (via ldns). */
int rr_to_str(const dns_rr *rr, char *out, size_t cap);

#endif

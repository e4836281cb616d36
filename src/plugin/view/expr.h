/* SPDX-License-Identifier: Apache-2.0 */
/*
 * expr.h — the view plugin's expressions: the part of the expr language
 * (the one CoreDNS's view plugin evaluates) that Corefiles write, compiled
 * once at setup and evaluated per query without allocating.
 *
 *   literals     'single' or "double" quoted strings (backslash escapes
 *                \\ \' \" \n \t), decimal integers, true, false,
 *                lists [a, b, ...] of literals
 *   functions    bufsize() class() client_ip() do() id() name() opcode()
 *                port() proto() server_ip() server_port() size() type()
 *                incidr(IP, 'CIDR')
 *   operators    (highest first) ! not; == != < <= > >= in, not in,
 *                matches, contains, startsWith, endsWith; && and; || or;
 *                parentheses
 * Everything else (arithmetic, variables, other functions, metadata())
 * is refused by expr_compile() with a message; so are expressions that
 * mix types (`type() == 1`), whose value is not a boolean, and `matches`
 * with anything but a string literal (the pattern is compiled once, with
 * Go's syntax, common/goregex.h).
 *
 * Ownership and threads: expr_compile() runs on the loading thread and
 * returns a tree the caller frees with expr_free(); expr_eval() only reads
 * the tree (regex copies aside: goregex is safe from any thread) and may
 * run on any number of workers at once.
 */
#ifndef TOPODNS_VIEW_EXPR_H
#define TOPODNS_VIEW_EXPR_H

#include <stddef.h>
#include "server/request.h"

typedef struct expr expr;

/* NULL with a message in err on anything outside the language above. */
expr *expr_compile(const char *text, char *err, size_t errlen);
void expr_free(expr *e);
/* 1 when the expression is true for r, 0 when false or when it cannot be
 * evaluated (a name too long for the scratch space, an invalid address). */
int expr_eval(const expr *e, const dns_req *r);

#endif

/*
 * registry.c — maps directive names to plugin_defs using order.h.
 */
#include <string.h>
#include "plugin.h"

#define PLUGIN_1(n) extern const plugin_def plugin_##n;
#define PLUGIN_0(n)
#define PLUGIN(n, impl) PLUGIN_##impl(n)
#include "order.h"
#undef PLUGIN
#undef PLUGIN_0
#undef PLUGIN_1

#define PLUGIN_1(n) &plugin_##n
#define PLUGIN_0(n) NULL
#define PLUGIN(n, impl) { #n, PLUGIN_##impl(n) },
static const struct { const char *name; const plugin_def *def; } table[] = {
#include "order.h"
};
#undef PLUGIN

int plugin_order(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return (int)i;
    return -1;
}

const plugin_def *plugin_lookup(const char *name)
{
    int i = plugin_order(name);
    return i < 0 ? NULL : table[i].def;
}

size_t plugin_list(const plugin_def **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].def && n < max)
            out[n++] = table[i].def;
    return n;
}

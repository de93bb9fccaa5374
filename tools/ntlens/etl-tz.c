/* Time-zone names in a trace header. Windows Vista and later write the
 * registry's MUI references there ("@tzres.dll,-212"), not the names: each
 * zone under HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\Time Zones
 * has a display string at -N0, its daylight name at -N1 and its standard
 * name at -N2. The English strings below are those of tzres.dll as listed
 * in plaso's plaso/winnt/time_zones.py ("Values of @tzres.dll,-[0-9]+",
 * github.com/log2timeline/plaso), for the zones most traces come from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl-common.h"

struct tz_name {
    int id;             /* the standard name's resource id; the daylight name's is id - 1 */
    const char *stem;   /* "Pacific": "Pacific Standard Time", "Pacific Daylight Time" */
};

static const struct tz_name zones[] = {
    {12, "Azores"}, {42, "E. South America"}, {62, "SA Eastern"}, {72, "Newfoundland"},
    {82, "Atlantic"}, {92, "Pacific SA"}, {102, "SA Western"}, {112, "Eastern"},
    {122, "SA Pacific"}, {132, "US Eastern"}, {142, "Canada Central"},
    {152, "Central America"}, {162, "Central"}, {192, "Mountain"}, {202, "US Mountain"},
    {212, "Pacific"}, {222, "Alaskan"}, {232, "Hawaiian"}, {262, "GMT"}, {272, "Greenwich"},
    {282, "Central Europe"}, {292, "Central European"}, {302, "Romance"},
    {312, "W. Central Africa"}, {322, "W. Europe"}, {332, "E. Europe"}, {342, "Egypt"},
    {352, "FLE"}, {362, "GTB"}, {372, "Jerusalem"}, {382, "South Africa"}, {392, "Arab"},
    {402, "Arabic"}, {412, "E. Africa"}, {422, "Russian"}, {432, "Iran"}, {442, "Arabian"},
    {462, "Afghanistan"}, {472, "Ekaterinburg"}, {482, "West Asia"}, {492, "India"},
    {502, "Nepal"}, {512, "Central Asia"}, {562, "SE Asia"}, {572, "China"},
    {582, "North Asia East"}, {592, "Malay Peninsula"}, {602, "Taipei"},
    {612, "W. Australia"}, {622, "Korea"}, {632, "Tokyo"}, {652, "AUS Central"},
    {662, "Cen. Australia"}, {672, "AUS Eastern"}, {682, "E. Australia"}, {692, "Tasmania"},
    {712, "West Pacific"}, {742, "New Zealand"}, {872, "Pakistan"}, {1502, "Turkey"},
};

const char *etl_tz_name(const char *name, char *buf, size_t size)
{
    const char *prefix = "@tzres.dll,-";
    char *end;
    long id;

    if (strncmp(name, prefix, strlen(prefix)) != 0)
        return name;
    id = strtol(name + strlen(prefix), &end, 10);
    if (*end || id <= 0)
        return name;
    if (id == 931 || id == 932)
        return "Coordinated Universal Time";
    for (size_t i = 0; i < sizeof zones / sizeof zones[0]; i++)
        if (zones[i].id == id || zones[i].id - 1 == id) {
            snprintf(buf, size, "%s %s Time", zones[i].stem,
                     zones[i].id == id ? "Standard" : "Daylight");
            return buf;
        }
    return name;
}

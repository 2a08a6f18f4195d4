#pragma once

// cpprestsdk defines a macro named U, which breaks fmt (spdlog) and any other template with a
// parameter of that name; this documented switch turns it off. Include cpprestsdk through here.
#ifndef _TURN_OFF_PLATFORM_STRING
#define _TURN_OFF_PLATFORM_STRING
#endif

#include <cpprest/astreambuf.h>
#include <cpprest/base_uri.h>
#include <cpprest/http_client.h>

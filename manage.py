#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "phoneintel.settings")
    from django.conf import settings
    from django.core.management import execute_from_command_line

    # Loaded here so that a missing or wrong variable says so: Django's command line would
    # hide the error and fail later with "Models aren't loaded yet".
    settings.INSTALLED_APPS  # noqa: B018
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()

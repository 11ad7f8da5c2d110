from fabric.cli.app import main

main()

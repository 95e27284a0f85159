CREATE INDEX `IDX_repository_forks` ON `repository` (`lower_name`) WHERE is_fork = 1;--> statement-breakpoint
CREATE INDEX `IDX_repository_mirrors` ON `repository` (`lower_name`) WHERE is_mirror = 1;--> statement-breakpoint
CREATE INDEX `IDX_repository_templates` ON `repository` (`lower_name`) WHERE is_template = 1;--> statement-breakpoint
CREATE INDEX `IDX_repository_archived` ON `repository` (`lower_name`) WHERE is_archived = 1;--> statement-breakpoint
CREATE INDEX `IDX_repository_private` ON `repository` (`lower_name`) WHERE is_private = 1;
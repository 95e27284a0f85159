CREATE INDEX `IDX_repository_template_id` ON `repository` (`template_id`);--> statement-breakpoint
CREATE INDEX `IDX_team_unit_org_id` ON `team_unit` (`org_id`);--> statement-breakpoint
CREATE INDEX `IDX_team_user_org_id` ON `team_user` (`org_id`);--> statement-breakpoint
CREATE INDEX `IDX_user_admins` ON `user` (`id`) WHERE is_admin = 1;